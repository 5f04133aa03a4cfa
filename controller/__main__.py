"""``python -m controller``."""

from controller.entry.cli import exit_now, main

exit_now(main())
