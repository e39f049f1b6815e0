/** Shard 1 of 2 of the unit suite (see test/helpers/shards.ts). */
import { registerShard } from '../helpers/shards.js';

await registerShard(0, 2);
