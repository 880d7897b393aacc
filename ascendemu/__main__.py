import sys

from ascendemu.cli import main

sys.exit(main())
