// Shard 1 of 2 of the unit tier (test/helpers/unit-shard.ts).
import { runShard } from "../helpers/unit-shard.ts";

runShard(0, 2);
