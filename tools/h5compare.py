#!/usr/bin/python3
"""tools/h5compare.py OLD.h5 NEW.h5 [--rtol R]: the comparison of two cdlab outputs dataset by
dataset (the package's cdlab.h5compare; `python3 -m cdlab.h5compare` is the same)."""
import sys

from cdlab.h5compare import main

sys.exit(main())
