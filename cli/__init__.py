"""The ``ascendemu`` command line (top layer): ``info``, ``demo``, ``run``, ``cache``.

``main`` parses the verb; ``run`` serves ``import mindspore`` from the front end and runs a script;
``demo`` drives the runtime directly. Heavy imports happen inside each verb.
"""
from .main import main

__all__ = ["main"]
