"""`python -m graft_eval_pipeline.cli`."""

import sys

from graft_eval_pipeline.cli import main

sys.exit(main())
