/**
 * hono/jsx renders without an AsyncLocalStorage, so that a page never slows the API.
 *
 * hono/jsx runs every render inside an `AsyncLocalStorage` when the runtime has one, for
 * `useContext()` after an `await` in an async component. On Node 20 the first `run()` of any
 * AsyncLocalStorage turns on async_hooks' promise hooks for the whole process, for good: from then
 * on every promise of every API request pays for them. The settings area renders its fixed pieces
 * when its module loads, so every server paid: `npm run bench`'s CPU per `GET /me` went from
 * 48 µs (before the area) to 77–79 µs, and the CPU profile showed `promiseInitHook` and four times
 * the garbage collection. Our pages use no context and no async component, which is all the
 * storage is for.
 *
 * hono/jsx looks for AsyncLocalStorage once, at its first render, through
 * `process.getBuiltinModule` or `process.mainModule.require`, and remembers the answer. Importing
 * this module makes that first render here, with both hidden, so hono/jsx remembers there is none
 * and renders synchronously as it does on runtimes without one. Import it before anything renders
 * (./layout.tsx does; every page imports that). `test/web/render-context.test.ts` checks that no
 * promise hook is on after pages render.
 */
import { jsx } from 'hono/jsx/jsx-runtime';

const host = process as { getBuiltinModule?: unknown; mainModule?: unknown };
const hidden = { getBuiltinModule: host.getBuiltinModule, mainModule: host.mainModule };
host.getBuiltinModule = undefined;
host.mainModule = undefined;
try {
  String(jsx('i', {}));
} finally {
  host.getBuiltinModule = hidden.getBuiltinModule;
  host.mainModule = hidden.mainModule;
}
