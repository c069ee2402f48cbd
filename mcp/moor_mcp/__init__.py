"""The moor MCP server (built in a later issue)."""
