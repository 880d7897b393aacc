"""The ``ascendemu`` command line (top layer): ``info``, ``demo``, ``run``, ``replay``, ``cache``.

``main`` parses the verb; ``run`` serves ``import mindspore`` from the front end and runs a script;
``replay`` re-issues a recorded trace; ``demo`` drives the runtime directly. Heavy imports happen inside
each verb.
"""
from .main import main

__all__ = ["main"]
