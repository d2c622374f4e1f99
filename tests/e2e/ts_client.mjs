// A minimal MCP client on the official TypeScript SDK (@modelcontextprotocol/sdk, pinned in tests/node).
//
//   node ts_client.mjs stdio <command> [args...]   spawn the server and talk over its stdin/stdout
//   node ts_client.mjs http <url>                  streamable HTTP (with $MCP_BEARER: that bearer token)
//
// It connects, lists the tools, calls the tool named by $MCP_TOOL with the JSON object in
// $MCP_TOOL_ARGS (default {}), and prints one JSON line on stdout:
//   {"protocolVersion", "serverName", "toolCount", "tools", "tool", "isError", "structuredContent", "text"}
// Exit code 0 on success, 1 on any failure (with the error on stderr).
//
// Module resolution: ESM ignores NODE_PATH, so the test copies this file next to a node_modules
// symlink that points at tests/node/node_modules.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

function transportFrom(argv) {
  const [mode, ...rest] = argv;
  if (mode === 'stdio' && rest.length > 0) {
    const env = { ...getDefaultEnvironment() };
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined) env[key] = value;
    }
    return new StdioClientTransport({ command: rest[0], args: rest.slice(1), env, stderr: 'inherit' });
  }
  if (mode === 'http' && rest.length === 1) {
    const token = process.env.MCP_BEARER;
    const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
    return new StreamableHTTPClientTransport(new URL(rest[0]), { requestInit });
  }
  throw new Error('usage: ts_client.mjs stdio <command> [args...] | http <url>');
}

async function main() {
  const toolName = process.env.MCP_TOOL;
  if (!toolName) throw new Error('set MCP_TOOL to the tool to call');
  const toolArgs = JSON.parse(process.env.MCP_TOOL_ARGS ?? '{}');
  const transport = transportFrom(process.argv.slice(2));
  const client = new Client({ name: 'mcp-bridge-e2e-ts', version: '1.0.0' });
  await client.connect(transport);
  try {
    const listed = await client.listTools();
    // callTool validates structuredContent against the tool's outputSchema (ajv) and throws on mismatch.
    const result = await client.callTool({ name: toolName, arguments: toolArgs });
    const text = (result.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
    const summary = {
      protocolVersion: transport.protocolVersion ?? null,
      serverName: client.getServerVersion()?.name ?? null,
      toolCount: listed.tools.length,
      tools: listed.tools.map((t) => t.name),
      tool: toolName,
      isError: result.isError ?? false,
      structuredContent: result.structuredContent ?? null,
      text,
    };
    process.stdout.write(JSON.stringify(summary) + '\n');
  } finally {
    await client.close();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`ts_client: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
