// The real authorization server of the identity tests: oidc-provider (pinned in package.json here)
// on 127.0.0.1, issuing JWT access tokens per resource indicator (RFC 8707).
//
//   node oidc_provider.mjs           listens on a free loopback port, prints one JSON ready line:
//                                    {"issuer": "http://127.0.0.1:PORT", "port": PORT, "kids": [...]}
//
// Resources: any http://127.0.0.1:PORT/mcp (a bridge under test), $UPSTREAM_AUDIENCE (the API the
// bridge calls), $OTHER_RESOURCE (a resource that is neither). Grants: client credentials (clients
// "alice" and "bob", one per user), authorization code + PKCE with the development login/consent
// forms (public client "mcp-app"), and RFC 8693 token exchange for the bridge's own client.
//
// Test-only routes under /_harness/ (this is a test fixture, not a pattern for production):
//   POST /_harness/rotate?publish=yes|no   new signing keys; with "no" /jwks keeps serving the old
//                                          ones (a key the resource server can never find)
//   POST /_harness/clock?offset=SECONDS    the provider's clock, shifted (issue already-expired tokens)
//   POST /_harness/format?opaque=yes|no    MCP access tokens opaque (checked by introspection) or JWTs
//   GET  /_harness/stats                   {"exchanges": N, "jwks": N}: requests seen
import http from 'node:http';
import Provider from 'oidc-provider';
import * as jose from 'jose';

const UPSTREAM_AUDIENCE = process.env.UPSTREAM_AUDIENCE || 'https://pets.upstream.test';
const OTHER_RESOURCE = process.env.OTHER_RESOURCE || 'https://other.test/mcp';
const SCOPES = 'pets:read pets:write';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const MCP_RESOURCE = /^http:\/\/127\.0\.0\.1:\d+\/mcp$/;

const CLIENTS = [
  { client_id: 'alice', client_secret: 'alice-secret-0123456789', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
  { client_id: 'bob', client_secret: 'bob-secret-0123456789', grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
  {
    client_id: 'mcp-app', token_endpoint_auth_method: 'none', grant_types: ['authorization_code'],
    response_types: ['code'], redirect_uris: ['http://127.0.0.1/callback'],
  },
  { client_id: 'bridge', client_secret: 'bridge-secret-0123456789', grant_types: [EXCHANGE], redirect_uris: [], response_types: [] },
];

const realNow = Date.now;
let clockOffset = 0;
Date.now = () => realNow() + clockOffset * 1000;

let generation = 0;
async function makeKeys() {
  generation += 1;
  const out = [];
  for (const [alg, opts] of [['RS256', {}], ['ES256', {}], ['EdDSA', { crv: 'Ed25519' }]]) {
    const { privateKey } = await jose.generateKeyPair(alg, { extractable: true, ...opts });
    out.push({ ...(await jose.exportJWK(privateKey)), kid: `g${generation}-${alg}`, alg, use: 'sig' });
  }
  return out;
}

const publicJwks = (keys) => ({ keys: keys.map(({ d, p, q, dp, dq, qi, ...pub }) => pub) });

let mcpFormat = 'jwt';

function resourceServer(resource) {
  if (MCP_RESOURCE.test(resource)) {
    return { scope: SCOPES, audience: resource, accessTokenFormat: mcpFormat, accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } };
  }
  if (resource === UPSTREAM_AUDIENCE) {
    return { scope: SCOPES, audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'ES256' } } };
  }
  if (resource === OTHER_RESOURCE) {
    return { scope: SCOPES, audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } };
  }
  return undefined;
}

const stats = { exchanges: 0, jwks: 0 };

function build(issuer, keys) {
  const provider = new Provider(issuer, {
    jwks: { keys },
    clients: CLIENTS,
    cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => {
          const info = resourceServer(resource);
          if (!info) throw new Error('unknown resource');
          return info;
        },
      },
    },
    pkce: { required: () => true },
    scopes: ['openid', 'pets:read', 'pets:write'],
    ttl: { AccessToken: 600, ClientCredentials: 600, AuthorizationCode: 60, Interaction: 600, Session: 600, Grant: 600, IdToken: 600 },
    findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  });
  provider.proxy = true;

  // RFC 8693: the subject token must be an MCP access token of this issuer; the new token is for the
  // upstream only, with at most the subject's scopes (its client_id is the bridge's).
  provider.registerGrantType(EXCHANGE, async (ctx) => {
    const { params, client } = ctx.oidc;
    stats.exchanges += 1;
    const refuse = (error, description) => {
      ctx.status = 400;
      ctx.body = { error, error_description: description };
    };
    if (params.subject_token_type !== ACCESS_TOKEN_TYPE) return refuse('invalid_request', 'subject_token_type');
    let claims;
    try {
      ({ payload: claims } = await jose.jwtVerify(params.subject_token, jose.createLocalJWKSet(publicJwks(keys)), { issuer }));
    } catch {
      // An opaque MCP token: this provider's own record of it, if it has one and it is still valid.
      const stored = (await provider.AccessToken.find(params.subject_token))
        || (await provider.ClientCredentials.find(params.subject_token));
      if (!stored || stored.isExpired) return refuse('invalid_grant', 'subject token invalid');
      claims = { sub: stored.accountId || stored.clientId, aud: stored.aud, scope: stored.scope };
    }
    const audiences = [].concat(claims.aud || []);
    if (!audiences.some((a) => MCP_RESOURCE.test(a))) return refuse('invalid_grant', 'subject token is not an MCP token');
    const audience = params.audience || params.resource;
    if (audience !== UPSTREAM_AUDIENCE) return refuse('invalid_target', 'unknown audience');
    const granted = new Set(String(claims.scope || '').split(' ').filter(Boolean));
    const asked = String(params.scope || '').split(' ').filter(Boolean);
    if (asked.some((s) => !granted.has(s))) return refuse('invalid_scope', 'beyond the subject token');
    const token = new provider.AccessToken({ accountId: claims.sub, client, scope: asked.join(' '), gty: 'token-exchange' });
    token.resourceServer = resourceServer(UPSTREAM_AUDIENCE);
    const value = await token.save();
    ctx.body = { access_token: value, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: token.expiration, scope: token.scope };
  }, ['subject_token', 'subject_token_type', 'audience', 'resource', 'scope', 'requested_token_type'], ['resource']);
  return provider;
}

let keys = await makeKeys();
let published = keys;
let provider;
let handle;

async function harness(req, res, url) {
  const answer = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (url.pathname === '/_harness/stats') return answer(200, stats);
  if (req.method === 'POST' && url.pathname === '/_harness/format') {
    mcpFormat = url.searchParams.get('opaque') === 'yes' ? 'opaque' : 'jwt';
    return answer(200, { format: mcpFormat });
  }
  if (req.method === 'POST' && url.pathname === '/_harness/clock') {
    clockOffset = Number(url.searchParams.get('offset') || 0);
    return answer(200, { offset: clockOffset });
  }
  if (req.method === 'POST' && url.pathname === '/_harness/rotate') {
    keys = await makeKeys();
    if (url.searchParams.get('publish') !== 'no') published = keys;
    provider = build(provider.issuer, keys);
    handle = provider.callback();
    return answer(200, { kids: keys.map((k) => k.kid), published: published.map((k) => k.kid) });
  }
  return answer(404, { error: 'not_found' });
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  if (url.pathname.startsWith('/_harness/')) {
    harness(req, res, url).catch((e) => { res.statusCode = 500; res.end(String(e)); });
    return;
  }
  if (url.pathname === '/jwks') {
    stats.jwks += 1;
    if (published !== keys) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(publicJwks(published)));
      return;
    }
  }
  handle(req, res);
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  provider = build(`http://127.0.0.1:${port}`, keys);
  handle = provider.callback();
  console.log(JSON.stringify({ issuer: provider.issuer, port, kids: keys.map((k) => k.kid) }));
});

// The test closes stdin (or dies): stop with it, so no provider outlives its test.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
