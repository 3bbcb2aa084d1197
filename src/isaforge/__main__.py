import sys

from isaforge.cli import main

sys.exit(main())
