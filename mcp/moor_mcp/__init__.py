"""The moor MCP server (`moor mcp`): memories for coding agents."""
