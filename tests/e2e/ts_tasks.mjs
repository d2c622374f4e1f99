// The official TypeScript SDK client (pinned in tests/node) driving MCP tasks and elicitation on the bridge.
//
//   node ts_tasks.mjs <command> [args...]      spawn the server over stdio
//
// $MCP_SCENARIO picks what it does; it prints one JSON line on stdout and exits 0 (1 on failure):
//   task     callToolStream(startJob, {kind: report}) as a task: {caps, execution, messages, result, instructions, title}
//   cancel   start a `hang` job as a task, cancel it once created: {messages, cancelled}
//   confirm  a plain call of startJob with $MCP_ELICIT (accept|decline) answering the form: {result, form}
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const TTL = { ttl: 60000 };

function transport(argv) {
  const env = { ...getDefaultEnvironment() };
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return new StdioClientTransport({ command: argv[0], args: argv.slice(1), env, stderr: 'inherit' });
}

async function collect(stream, onCreated) {
  const messages = [];
  let result = null;
  for await (const message of stream) {
    messages.push(message.type === 'taskStatus' ? `status:${message.task.status}` : message.type);
    if (message.type === 'taskCreated' && onCreated) await onCreated(message.task.taskId);
    if (message.type === 'result') result = message.result;
    if (message.type === 'error') result = { error: String(message.error?.message ?? message.error) };
  }
  return { messages, result };
}

async function main() {
  const scenario = process.env.MCP_SCENARIO ?? 'task';
  const forms = [];
  const client = new Client(
    { name: 'mcp-bridge-e2e-ts-tasks', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, defaultTaskPollInterval: 50 },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    forms.push(request.params.message);
    const action = process.env.MCP_ELICIT ?? 'accept';
    return action === 'accept' ? { action, content: { confirm: true } } : { action };
  });
  await client.connect(transport(process.argv.slice(2)));
  try {
    const tools = (await client.listTools()).tools;
    const execution = Object.fromEntries(tools.filter((t) => t.execution).map((t) => [t.name, t.execution]));
    let summary;
    if (scenario === 'task') {
      const stream = client.experimental.tasks.callToolStream(
        { name: 'startJob', arguments: { kind: 'report', steps: 3 } }, CallToolResultSchema, { task: TTL });
      const { messages, result } = await collect(stream);
      summary = {
        caps: client.getServerCapabilities()?.tasks ?? null,
        execution,
        messages,
        result,
        instructions: client.getInstructions() ?? null,
        title: client.getServerVersion()?.title ?? null,
        forms,
      };
    } else if (scenario === 'cancel') {
      let cancelled = null;
      const stream = client.experimental.tasks.callToolStream(
        { name: 'startJob', arguments: { kind: 'hang' } }, CallToolResultSchema, { task: TTL });
      const { messages } = await collect(stream, async (taskId) => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        cancelled = await client.experimental.tasks.cancelTask(taskId);
      });
      summary = { messages, cancelled: cancelled?.status ?? null };
    } else {
      const result = await client.callTool({ name: 'startJob', arguments: { kind: 'inline', steps: 1 } });
      summary = { result, forms };
    }
    process.stdout.write(JSON.stringify(summary) + '\n');
  } finally {
    await client.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
