"""Specs of ``sampled_rest5`` (issue 21): placeholder, filled in below."""
from __future__ import annotations

from .core import Py, T, cell, op  # noqa: F401

SPECS: list = []
