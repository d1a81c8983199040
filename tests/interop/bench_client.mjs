// The official TypeScript SDK client doing what benches/stdio_throughput.rs does with
// toolgate's client, so both are measured against the same servers in the same run.
//
//   node bench_client.mjs calls   --calls N --warmup W --tool NAME --args JSON -- CMD ARGS...
//   node bench_client.mjs connect --servers N -- CMD ARGS...
//
// Prints one JSON object on stdout (times in microseconds).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

function parse(argv) {
  const split = argv.indexOf("--");
  if (split < 0 || split === argv.length - 1) {
    throw new Error("usage: bench_client.mjs calls|connect [options] -- CMD ARGS...");
  }
  const [mode, ...flags] = argv.slice(0, split);
  const [command, ...args] = argv.slice(split + 1);
  const opts = { mode, command, args, calls: 2000, warmup: 50, servers: 1, tool: "echo", toolArgs: {} };
  for (let i = 0; i < flags.length; i += 2) {
    const value = flags[i + 1];
    switch (flags[i]) {
      case "--calls": opts.calls = Number(value); break;
      case "--warmup": opts.warmup = Number(value); break;
      case "--servers": opts.servers = Number(value); break;
      case "--tool": opts.tool = value; break;
      case "--args": opts.toolArgs = JSON.parse(value); break;
      default: throw new Error(`unknown flag ${flags[i]}`);
    }
  }
  return opts;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function connect(opts) {
  const client = new Client({ name: "ts-sdk-bench", version: "0" });
  const transport = new StdioClientTransport({ command: opts.command, args: opts.args, stderr: "ignore" });
  await client.connect(transport);
  // toolgate's hub lists the tools as part of connecting; do the same for a fair comparison.
  await client.listTools();
  return client;
}

function percentile(sorted, p) {
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)];
}

async function benchCalls(opts) {
  const client = await connect(opts);
  for (let i = 0; i < opts.warmup; i++) {
    await client.callTool({ name: opts.tool, arguments: opts.toolArgs });
  }
  const latencies = new Array(opts.calls);
  const start = nowUs();
  for (let i = 0; i < opts.calls; i++) {
    const t0 = nowUs();
    const result = await client.callTool({ name: opts.tool, arguments: opts.toolArgs });
    latencies[i] = nowUs() - t0;
    if (result.isError) {
      throw new Error(`call ${i} failed: ${JSON.stringify(result.content)}`);
    }
  }
  const totalUs = nowUs() - start;
  await client.close();
  latencies.sort((a, b) => a - b);
  return {
    calls: opts.calls,
    total_us: totalUs,
    calls_per_sec: (opts.calls * 1e6) / totalUs,
    p50_us: percentile(latencies, 50),
    p99_us: percentile(latencies, 99),
  };
}

async function benchConnect(opts) {
  const start = nowUs();
  const clients = await Promise.all(Array.from({ length: opts.servers }, () => connect(opts)));
  const totalUs = nowUs() - start;
  await Promise.all(clients.map((c) => c.close()));
  return { servers: opts.servers, total_us: totalUs };
}

try {
  const opts = parse(process.argv.slice(2));
  const stats = opts.mode === "connect" ? await benchConnect(opts) : await benchCalls(opts);
  process.stdout.write(JSON.stringify(stats) + "\n");
} catch (error) {
  process.stderr.write(`bench_client: ${error.stack ?? error}\n`);
  process.exit(1);
}
