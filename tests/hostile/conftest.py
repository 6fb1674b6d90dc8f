"""The corpus of hostile inputs (issue 30): one test per attack on an input path; helpers live in
``hostile_helpers`` (importable from every test: tests/conftest.py, ``HELPER_DIRS``)."""
