"""The graph compiler and executors: IR, capture, passes, memory plans, the typed launch schedule,
compile entry and graph cache, and the executor that runs ops and graphs through the HAL (a facade over
its run mode, transfers, graph preparation and bindings, op, step and sink runners, and run summary)."""

__all__ = ["ir", "capture", "passes", "memory_plan", "schedule", "plan", "graph_cache", "executor", "modes", "transfer",
           "bindings", "prepare", "pynative", "runners", "summary", "parallel"]
