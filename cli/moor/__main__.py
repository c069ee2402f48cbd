import sys

from moor.main import main

sys.exit(main())
