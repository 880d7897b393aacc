"""Wall-clock limits for the processes tests start. A limit is there to end a test that hangs, not to
time one: it is generous, so a busy machine (a suite at load 20-37) makes a test slower, never red. The
CI run has its own overall limit."""
SUBPROCESS_TIMEOUT_S = 1800

# Peak host RSS of a DryRun whose weights would take gigabytes (tests/test_abstract_weights.py): an
# abstract weight holds no values, so the process needs its interpreter, ascendemu and the graph
# (~150-300 MiB measured); the limit only catches weights being filled (one would take 1 GiB)
ABSTRACT_DRYRUN_RSS_MIB = 900
