// The webhook jobs contract on real Redis (memory: test/unit/webhook-jobs-engine-memory.test.ts), and what only Redis
// can do: lose everything (a flush of the keys), after which a holder learns it holds nothing and the sweep's
// enqueue starts over.
import { Redis } from "ioredis";
import t from "tap";
import { redisKeys } from "../runtime/engines/redis/keys.ts";
import { defineScripts } from "../runtime/engines/redis/scripts.ts";
import { RedisWebhookJobs } from "../runtime/engines/redis/webhook-jobs.ts";
import { TEST_REDIS_URL, uniqueName } from "./helpers/env.ts";
import { deletePrefix } from "./helpers/node.ts";
import { webhookJobsContract } from "./webhook-jobs.contract.ts";

function make() {
  const prefix = `flocktest:${uniqueName("wh")}:`;
  const cmd = new Redis(TEST_REDIS_URL);
  return {
    jobs: new RedisWebhookJobs(defineScripts(cmd), redisKeys(prefix)),
    prefix,
    close: async () => {
      await deletePrefix(prefix);
      cmd.disconnect();
    },
  };
}

t.test("redis webhook jobs", async (t) => {
  webhookJobsContract(t, async () => make());
});

t.test("after the keys are lost, nothing is held and the agents are queued again", async (t) => {
  const { jobs, prefix, close } = make();
  t.teardown(close);
  await jobs.enqueue(["x"]);
  const [job] = await jobs.take("a", 1);
  t.ok(job);
  await deletePrefix(prefix);
  t.same([...(await jobs.renew("a", [job!.entry]))], [], "the holder learns it lost the job");
  t.same(await jobs.take("a", 1), [], "no group: nothing to take, no error");
  t.same(await jobs.reclaim("a", 0, 1), [], "nor to reclaim");
  t.equal(await jobs.enqueue(["x"]), 1, "the sweep's enqueue makes the job again");
  const [again] = await jobs.take("b", 1);
  t.equal(again?.agent, "x");
});
