import sys

from ascendemu.cli.main import main

sys.exit(main())
