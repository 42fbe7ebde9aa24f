// Run as its own process (test/lifecycle.test.ts): starts a node from the environment, waits for SIGTERM, closes
// it, prints the handles still active, and then does NOT call process.exit: the process ends only if close() left
// nothing behind (no socket, server or timer; an unref'd timer still shows in the printed list).
import { loadConfig } from "../../runtime/config.ts";
import { createLogger } from "../../runtime/log.ts";
import { startNode } from "../../runtime/server.ts";

const config = loadConfig();
const node = await startNode(config, createLogger(config.LOG_LEVEL));
process.stdout.write(`listening ${node.port} metrics ${node.metricsPort ?? "off"}\n`);
process.once("SIGTERM", () => {
  void node.close().then(() => {
    // what close() left behind (the stdout pipe this writes to is the process's own)
    process.stdout.write(`left ${JSON.stringify(process.getActiveResourcesInfo())}\n`);
  });
});
