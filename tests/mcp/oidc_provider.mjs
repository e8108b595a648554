// Two OpenID providers for the authorization tests (tests/mcp_oauth.rs), on 127.0.0.1 with
// ports the system picks: npm `oidc-provider` (a certified implementation), with resource
// indicators (RFC 8707: JWT access tokens whose audience is the resource asked for), PKCE,
// dynamic registration, client credentials and RFC 9207's `iss`. The second provider is
// only there to issue tokens of another issuer. A person's part is done by this script
// itself: the login interaction finishes at once for the account "alice", and the consent
// one grants what is asked, so that a client that follows redirects (keeping cookies, as a
// browser does) gets its code with no page to fill in.
//
// Usage: node oidc_provider.mjs NODE_MODULES (where setup.sh installed oidc-provider).
// Prints one JSON line {"issuer": URL, "other": URL} once both listen; exits when stdin
// closes (the test's end).
import http from 'node:http';
import crypto from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.argv[2];
const { default: Provider } = await import(pathToFileURL(path.join(modules, 'oidc-provider', 'lib', 'index.js')).href);

const SCOPES = ['mcp:tools', 'mcp:whoami'];

async function start() {
  const server = http.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: crypto.randomUUID(), use: 'sig', alg: 'RS256' };
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    clients: [
      // Machines: client credentials, the second with access tokens that live one second.
      ...['robot', 'short'].map((id) => ({
        client_id: id,
        client_secret: `${id}-secret`,
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      })),
      // The MCP server itself, when it checks tokens by introspection (RFC 7662).
      {
        client_id: 'resource-server',
        client_secret: 'resource-server-secret',
        grant_types: [],
        redirect_uris: [],
        response_types: [],
      },
    ],
    // The resource scopes too: clients that register with a scope (the TypeScript SDK does)
    // must name ones the provider lists.
    scopes: ['openid', 'offline_access', ...SCOPES],
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (ctx, client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => ({
          scope: SCOPES.join(' '),
          audience: resource,
          accessTokenTTL: client.clientId === 'short' ? 1 : 3600,
          // Opaque tokens for resources under /opaque/ (they are checked by introspection:
          // the provider introspects no JWT); JWTs for the others.
          accessTokenFormat: new URL(resource).pathname.startsWith('/opaque/') ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    pkce: { required: () => true },
    findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  });
  provider.proxy = false;
  const callback = provider.callback();
  server.on('request', async (req, res) => {
    if (req.url.startsWith('/interaction/')) {
      try {
        const details = await provider.interactionDetails(req, res);
        if (process.env.OIDC_DEBUG) console.error(JSON.stringify(details.prompt));
        let result;
        if (details.prompt.name === 'login') {
          result = { login: { accountId: 'alice' } };
        } else {
          // Consent: everything asked for is granted.
          const grant = details.grantId
            ? await provider.Grant.find(details.grantId)
            : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
          const missing = details.prompt.details;
          if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
          if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
          for (const [resource, scopes] of Object.entries(missing.missingResourceScopes || {})) {
            grant.addResourceScope(resource, scopes.join(' '));
          }
          result = { consent: { grantId: await grant.save() } };
        }
        await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
      } catch (error) {
        res.statusCode = 400;
        res.end(String(error));
      }
      return;
    }
    callback(req, res);
  });
  return { issuer, server };
}

const first = await start();
const second = await start();
process.stdout.write(JSON.stringify({ issuer: first.issuer, other: second.issuer }) + '\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
