import sys

from moor.launch import main

sys.exit(main())
