"""Detection corpora shared by the test suite and `bench/detection_table.py`.

Every case is a small repo (path -> bytes) built at test time from inert strings; nothing here
is ever loaded. See registry.py for how a case registers itself under a family.
"""
