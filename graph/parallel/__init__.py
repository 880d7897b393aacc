"""Semi-auto parallel (MindSpore's SEMI_AUTO_PARALLEL): the sharding pass that turns the global graph a
script describes into one rank's local graph. ``layout`` (device matrix + tensor map), ``strategy``
(``Primitive.shard`` strategies, checked, and the device matrix they make), ``rules`` (one stanza per op
kind: which layouts its inputs need and which its outputs get), ``redistribution`` (the collectives and
slices that move a value between layouts), ``sharding`` (the pass itself, run as ops are captured),
``optimizer_shard`` (optimizer parallel: weights and states split over the ranks repeating them),
``auto_strategy`` (AUTO_PARALLEL: the strategy search run on a first capture, before the pass)."""

__all__ = ["layout", "strategy", "rules", "redistribution", "sharding", "optimizer_shard", "auto_strategy"]
