"""The interconnect model against the alpha-beta-gamma formulas written out by hand (REFERENCE-ranks 6.3).

The constants are spelled out here from their sources, not read from the module: the 910A's HCCS
link is 240 Gbit/s = 30e9 B/s, its RoCE port 100 Gbit/s = 12.5e9 B/s, the model's latencies 5 us
(HCCS) and 10 us (RoCE), and the reduction is HBM-bound: 3 bytes moved per byte reduced at
1.2e12 B/s, gamma = 2.5e-12 s/B (the vector units need 1.2e-13 s/B for float32).
"""
from __future__ import annotations

import math

import pytest

from ascendemu.device.interconnect import (HalvingDoubling, Hierarchical, Mesh, Ring, Single, choose_algorithm,
                                           hccs_link, placement, reduction_gamma, roce_link)
from ascendemu.device.spec import get_spec
from ascendemu.errors import FeatureNotSupportedError, InvalidParamError

SPEC = get_spec()
A_H, B_H = 5e-6, 1 / 30e9          # HCCS
A_R, B_R = 10e-6, 1 / 12.5e9       # RoCE
G = 2.5e-12                        # float32 reduction
SIZES = [0, 1024, 1 << 20, 64 << 20, 1 << 30]


def close(x: float, y: float) -> bool:
    return x == pytest.approx(y, rel=0.01, abs=1e-12)


def test_gamma_is_the_hbm_bound_reduction():
    assert close(reduction_gamma(SPEC, "float32"), G)
    assert close(reduction_gamma(SPEC, "float16"), G)
    # a device with slow vector units is compute-bound: fp32 costs 2 vector cycles per element
    slow = get_spec(vector_lanes_fp16=1)
    assert close(reduction_gamma(slow, "float32"), 2 / 4 / (1e9 * 32))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("p", [2, 4, 8])
def test_ring_and_halving_doubling_match_the_reference_formulas(p, n):
    ring, hd = Ring(p, roce_link(SPEC)), HalvingDoubling(p, roce_link(SPEC))
    assert close(ring.all_reduce(n, G), 2 * (p - 1) * A_R + 2 * (p - 1) / p * n * B_R + (p - 1) / p * n * G)
    assert close(hd.all_reduce(n, G), 2 * math.log2(p) * A_R + 2 * (p - 1) / p * n * B_R + (p - 1) / p * n * G)
    assert close(ring.all_gather(n), (p - 1) * A_R + (p - 1) / p * n * B_R)
    assert close(ring.reduce_scatter(n, G), (p - 1) * A_R + (p - 1) / p * n * (B_R + G))
    assert close(hd.all_gather(n), math.log2(p) * A_R + (p - 1) / p * n * B_R)
    assert close(hd.reduce_scatter(n, G), math.log2(p) * A_R + (p - 1) / p * n * (B_R + G))


@pytest.mark.parametrize("n", SIZES)
def test_halving_doubling_off_a_power_of_two_pays_the_extra_steps(n):
    p = 6
    expected = (2 * 2 + 2) * A_R + (2 * 5 / 6 + 2) * n * B_R + n * (1 + 5 / 6) * G
    assert close(HalvingDoubling(p, roce_link(SPEC)).all_reduce(n, G), expected)


@pytest.mark.parametrize("n", SIZES)
def test_allreduce_on_2_4_8_ranks_of_one_server(n):
    two, four, eight = (choose_algorithm(range(p), SPEC) for p in (2, 4, 8))
    assert isinstance(two, Mesh) and isinstance(four, Mesh) and isinstance(eight, Hierarchical)
    # a mesh of p: reduce-scatter and all-gather each one step of n/p bytes per link
    assert close(two.all_reduce(n, G), 2 * (A_H + n / 2 * B_H) + n / 2 * G)
    assert close(four.all_reduce(n, G), 2 * (A_H + n / 4 * B_H) + 3 / 4 * n * G)
    # two HCCS groups: mesh reduce-scatter, halving-doubling of n/4 between the groups over RoCE, mesh all-gather
    level0 = (A_H + n / 4 * B_H + 3 / 4 * n * G) + (A_H + n / 4 * B_H)
    level1 = 2 * A_R + 2 * (1 / 2) * (n / 4) * B_R + (1 / 2) * (n / 4) * G
    assert close(eight.all_reduce(n, G), level0 + level1)
    # 2 ranks: the mesh of two is the ring of two (one link)
    assert close(two.all_reduce(n, G), Ring(2, hccs_link(SPEC)).all_reduce(n, G))


@pytest.mark.parametrize("n", [4096, 1 << 20])
def test_other_collectives_on_four_and_eight_ranks(n):
    four, eight = choose_algorithm(range(4), SPEC), choose_algorithm(range(8), SPEC)
    assert close(four.all_gather(n), A_H + n / 4 * B_H)
    assert close(four.reduce_scatter(n, G), A_H + n / 4 * B_H + 3 / 4 * n * G)
    assert close(four.broadcast(n), 2 * (A_H + n / 4 * B_H))
    assert close(four.all_to_all(n), A_H + n / 4 * B_H)
    assert close(four.barrier(), 2 * A_H)
    assert close(eight.all_gather(n), (A_R + 1 / 2 * n / 4 * B_R) + (A_H + n / 4 * B_H))
    assert close(eight.reduce_scatter(n, G), (A_H + n / 4 * B_H + 3 / 4 * n * G) + (A_R + 1 / 2 * n / 4 * (B_R + G)))
    assert close(eight.all_to_all(n), (A_H + n / 2 / 4 * B_H) + (A_R + n / 2 * B_R))
    assert close(eight.barrier(), 2 * A_H + 2 * A_R)


def test_hccl_chooses_by_topology(monkeypatch):
    monkeypatch.delenv("HCCL_ALGO", raising=False)
    assert [placement(r, SPEC).group for r in range(8)] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert placement(13, SPEC) == placement(13, SPEC).__class__(server=1, group=1, chip=5)
    # an Atlas 800T A2 (the 910B presets): its 8 chips one group, a mesh over HCCS, servers over RoCE
    b2 = get_spec("Ascend910B2")
    assert [placement(r, b2).group for r in range(16)] == [0] * 16
    assert choose_algorithm(range(8), b2) == Mesh(8, hccs_link(b2))
    assert choose_algorithm(range(16), b2) == Hierarchical(Mesh(8, hccs_link(b2)), HalvingDoubling(2, roce_link(b2)))
    assert choose_algorithm([3], SPEC) == Single()
    assert choose_algorithm([4, 5, 7], SPEC) == Mesh(3, hccs_link(SPEC))            # one group, any size
    # one rank per group: nothing at level 0, the groups halve and double over RoCE
    assert choose_algorithm([0, 4], SPEC) == Hierarchical(Single(), HalvingDoubling(2, roce_link(SPEC)))
    # 2 servers = 4 groups (a power of 2): H-D_R; 3 servers = 6 groups: ring (HCCL's default rule)
    assert choose_algorithm(range(16), SPEC).outer == HalvingDoubling(4, roce_link(SPEC))
    assert choose_algorithm(range(24), SPEC).outer == Ring(6, roce_link(SPEC))
    # uneven groups: one flat ring over the slowest link
    assert choose_algorithm([0, 1, 4], SPEC) == Ring(3, roce_link(SPEC))
    monkeypatch.setenv("HCCL_ALGO", "level0:NA;level1:ring")
    assert choose_algorithm(range(16), SPEC).outer == Ring(4, roce_link(SPEC))
    monkeypatch.setenv("HCCL_ALGO", "level0:NA;level1:NB")
    with pytest.raises(FeatureNotSupportedError, match="level-1 algorithm 'NB' is not modelled"):
        choose_algorithm(range(16), SPEC)
    with pytest.raises(InvalidParamError, match="distinct non-negative world ranks"):
        choose_algorithm([1, 1], SPEC)
