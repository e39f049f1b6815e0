/** Shard 1 of 2 of the store-dependent files on PostgreSQL (see test/helpers/shards.ts). */
import { registerShard } from '../helpers/shards.js';

await registerShard(0, 2, 'postgres');
