/**
 * The layer rule (README "Development"): arrows point down only,
 * cli → server → http/routes/web → workers → repos → db; domain/ is used by every layer and imports
 * none of them; providers/ import only domain/, config and the logger. No exceptions: a
 * back-edge or a cycle fails `npm run lint`.
 */
const layer = (name, from, mayNotImport) => ({
  name,
  severity: 'error',
  comment: `${name}: this import points up the layers (cli → server → http/routes → workers → repos → db)`,
  from: { path: from },
  to: { path: mayNotImport },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'modules importing each other',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-imports-no-layer',
      severity: 'error',
      comment: 'src/domain/ is used by every layer and imports none of them',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'providers-import-only-domain-and-config',
      severity: 'error',
      comment: 'providers import only src/domain/, src/config.ts and src/logger.ts',
      from: { path: '^src/providers/' },
      to: { path: '^src/', pathNot: '^src/(providers/|domain/|config\\.ts$|logger\\.ts$)' },
    },
    {
      name: 'schemas-import-only-domain',
      severity: 'error',
      comment: 'the zod schemas describe shapes: they import only src/domain/',
      from: { path: '^src/schemas/' },
      to: { path: '^src/', pathNot: '^src/(schemas|domain)/' },
    },
    layer(
      'db-knows-no-resource',
      '^src/db/',
      '^src/(repos|workers|http|routes|web|import|seed|cli|providers|schemas)/|^src/server\\.ts$',
    ),
    layer('repos-below-workers', '^src/repos/', '^src/(workers|http|routes|web|import|seed|cli)/|^src/server\\.ts$'),
    layer('workers-below-http', '^src/workers/', '^src/(http|routes|web|import|seed|cli)/|^src/server\\.ts$'),
    // web/: the settings area's pages (decisions.md §18), at the level of http/ and routes/.
    layer('http-below-server', '^src/(http|routes|web)/', '^src/(import|seed|cli)/|^src/server\\.ts$'),
    layer(
      'import-and-seed-below-server',
      '^src/(import|seed)/',
      '^src/(workers|http|routes|web|cli)/|^src/server\\.ts$',
    ),
    layer('server-below-cli', '^src/server\\.ts$', '^src/cli/'),
    layer('limiter-imports-only-domain', '^src/limiter/', '^src/(?!limiter/|domain/)'),
    {
      name: 'not-to-test',
      severity: 'error',
      comment: 'production code never imports test code',
      from: { path: '^src/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
  },
};
