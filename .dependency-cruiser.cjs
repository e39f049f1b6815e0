/**
 * The layer rule (docs/development.md "The map"): arrows point down only,
 * cli → server/app → routes/web/fixture → http → workers → repos → db; domain/ is used by every layer and imports
 * none of them; providers/ import only domain/, config and the logger. No exceptions: a
 * back-edge or a cycle fails `npm run lint`.
 */
const layer = (name, from, mayNotImport) => ({
  name,
  severity: 'error',
  comment: `${name}: this import points up the layers (cli → server/app → routes/web/fixture → http → workers → repos → db)`,
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
      '^src/(repos|workers|http|routes|web|fixture|import|seed|cli|providers|schemas)/|^src/(server|app)\\.ts$',
    ),
    layer(
      'repos-below-workers',
      '^src/repos/',
      '^src/(workers|http|routes|web|fixture|import|seed|cli)/|^src/(server|app)\\.ts$',
    ),
    layer(
      'workers-below-http',
      '^src/workers/',
      '^src/(http|routes|web|fixture|import|seed|cli)/|^src/(server|app)\\.ts$',
    ),
    // The app is assembled above its parts (src/app.ts): the pipeline knows none of them, they plug
    // into it (AppParts, PageArea, FixtureHooks in src/http/).
    layer('http-below-its-parts', '^src/http/', '^src/(routes|web|fixture)/|^src/(server|app)\\.ts$'),
    // routes/ (the API), web/ (the settings area's pages, decisions.md §18) and fixture/ (the admin
    // API, §14) stand side by side over http/: none imports another.
    layer('routes-web-fixture-apart', '^src/routes/', '^src/(web|fixture)/'),
    layer('routes-web-fixture-apart', '^src/web/', '^src/(routes|fixture)/'),
    layer('routes-web-fixture-apart', '^src/fixture/', '^src/(routes|web)/'),
    layer('parts-below-server', '^src/(routes|web|fixture)/', '^src/(import|seed|cli)/|^src/(server|app)\\.ts$'),
    layer(
      'import-and-seed-below-server',
      '^src/(import|seed)/',
      '^src/(workers|http|routes|web|fixture|cli)/|^src/(server|app)\\.ts$',
    ),
    layer('server-below-cli', '^src/(server|app)\\.ts$', '^src/cli/'),
    layer('limiter-imports-only-domain', '^src/limiter/', '^src/(?!limiter/|domain/)'),
    // outreach-api/testing and outreach-api/client (issue #29): shipped as built files on their own,
    // they reach the server only by starting it and over HTTP, and carry no dependency but openapi-fetch
    // (bundled in).
    {
      name: 'libraries-talk-http-only',
      severity: 'error',
      comment:
        'src/testing/ and src/client/ import no server code, not even types: only each other and what was generated from the served documents',
      from: { path: '^src/(testing|client)/' },
      to: { path: '^src/', pathNot: '^src/(testing|client)/' },
    },
    {
      name: 'client-below-testing',
      severity: 'error',
      comment: 'the client knows nothing of the fixture',
      from: { path: '^src/client/' },
      to: { path: '^src/testing/' },
    },
    {
      name: 'server-imports-no-library',
      severity: 'error',
      comment: 'the server never imports the libraries built for its users',
      from: { path: '^src/', pathNot: '^src/(testing|client)/' },
      to: { path: '^src/(testing|client)/' },
    },
    {
      name: 'libraries-ship-without-dependencies',
      severity: 'error',
      comment: 'the built libraries bundle openapi-fetch and need nothing else installed',
      from: { path: '^src/(testing|client)/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        pathNot: '^node_modules/(openapi-fetch|openapi-typescript-helpers)/',
      },
    },
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
