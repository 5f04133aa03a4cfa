"""``python -m controller``."""

from controller.cli import exit_now, main

exit_now(main())
