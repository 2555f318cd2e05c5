"""se-gym's metadata lives in pyproject.toml (PEP 621); this shim keeps ``python setup.py ...`` and
old pips that look for setup.py working."""
from setuptools import setup

setup()
