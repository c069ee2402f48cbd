import sys

from moor_mcp.server import main

sys.exit(main())
