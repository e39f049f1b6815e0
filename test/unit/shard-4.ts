/** Shard 2 of 2 of the store-dependent files on PostgreSQL (see test/helpers/shards.ts). */
import { registerShard } from '../helpers/shards.js';

await registerShard(1, 2, 'postgres');
