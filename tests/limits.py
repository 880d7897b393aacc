"""Wall-clock limits for the processes tests start. A limit is there to end a test that hangs, not to
time one: it is generous, so a busy machine (a suite at load 20-37) makes a test slower, never red. The
CI run has its own overall limit."""
SUBPROCESS_TIMEOUT_S = 1800
