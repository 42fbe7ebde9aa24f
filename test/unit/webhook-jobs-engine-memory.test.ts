// The webhook jobs contract on the memory engine (the Redis engine's: test/webhook-jobs-redis.test.ts).
import t from "tap";
import { MemoryWebhookJobs } from "../../runtime/engines/memory/webhook-jobs.ts";
import { webhookJobsContract } from "../webhook-jobs.contract.ts";

webhookJobsContract(t, async () => ({ jobs: new MemoryWebhookJobs(), close: async () => {} }));
