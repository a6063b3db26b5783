"""`python -m elelem_kernel.cli ...`: the `elelem-kernel` command."""

import sys

from elelem_kernel.cli import main

sys.exit(main())
