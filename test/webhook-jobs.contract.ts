// The webhook jobs contract (runtime/engines/webhook-jobs.ts): every implementation must pass it. No time passes:
// a reclaim with no idle time stands for a node silent past it, one with a long idle time for a live node.
import type { Test } from "tap";
import type { WebhookJobs } from "../runtime/engines/webhook-jobs.ts";

export function webhookJobsContract(t: Test, make: () => Promise<{ jobs: WebhookJobs; close: () => Promise<void> }>) {
  t.test("one job per agent, each taken by one consumer, in the order queued", async (t) => {
    const { jobs, close } = await make();
    t.teardown(close);
    t.same(await jobs.take("a", 10), [], "nothing queued: nothing to take");
    t.equal(await jobs.enqueue(["x", "y", "x"]), 2, "an agent queued twice has one job");
    t.equal(await jobs.enqueue(["x"]), 0, "and queuing it again adds none");
    const taken = await jobs.take("a", 10);
    t.same(
      taken.map((j) => j.agent),
      ["x", "y"],
    );
    t.same(await jobs.take("b", 10), [], "a job taken is not handed to another");
    t.equal(await jobs.enqueue(["x"]), 0, "a held job still counts as the agent's");
    t.same(
      [
        ...(await jobs.renew(
          "a",
          taken.map((j) => j.entry),
        )),
      ].sort(),
      taken.map((j) => j.entry).sort(),
    );
    t.same(
      [
        ...(await jobs.renew(
          "b",
          taken.map((j) => j.entry),
        )),
      ],
      [],
      "a consumer renews only its own",
    );
  });

  t.test("a finished job lets the agent be queued again", async (t) => {
    const { jobs, close } = await make();
    t.teardown(close);
    await jobs.enqueue(["x"]);
    const [job] = await jobs.take("a", 1);
    await jobs.finish(job!);
    t.same([...(await jobs.renew("a", [job!.entry]))], [], "no longer held");
    t.equal(await jobs.enqueue(["x"]), 1);
    const [again] = await jobs.take("b", 1);
    t.equal(again?.agent, "x");
    t.not(again?.entry, job!.entry, "as a new job");
  });

  t.test("a silent holder's jobs are reclaimed; a live holder's are not", async (t) => {
    const { jobs, close } = await make();
    t.teardown(close);
    await jobs.enqueue(["x", "y"]);
    const held = await jobs.take("dead", 10);
    t.equal(held.length, 2);
    t.same(await jobs.reclaim("b", 60_000, 10), [], "renewed within the idle time: kept");
    const moved = await jobs.reclaim("b", 0, 10);
    t.same(moved.map((j) => j.agent).sort(), ["x", "y"], "past the idle time: the other consumer holds them");
    t.same(
      [
        ...(await jobs.renew(
          "dead",
          held.map((j) => j.entry),
        )),
      ],
      [],
      "the old holder learns it lost them",
    );
    t.equal(
      (
        await jobs.renew(
          "b",
          moved.map((j) => j.entry),
        )
      ).size,
      2,
    );
    t.equal(await jobs.enqueue(["x", "y"]), 0, "still one job each");
  });
}
