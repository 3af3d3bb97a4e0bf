/**
 * Bearer-token authentication. The admin token (written to the kubeconfig) is a member
 * of system:masters; service-account tokens minted by the server authenticate as
 * `system:serviceaccount:<ns>:<name>` so RBAC can be enforced on them.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export interface UserInfo {
  name: string;
  groups: string[];
}

/** The API server's own audience, what tokens are issued for when a request names none. */
export const API_AUDIENCES = ['https://kubernetes.default.svc.cluster.local'];

export class Authenticator {
  private readonly tokens = new Map<string, UserInfo>();
  /** Expiry (epoch ms) of tokens issued by TokenRequest. */
  private readonly expiry = new Map<string, number>();
  readonly adminToken: string;
  readonly audiences = API_AUDIENCES;

  constructor(adminToken = randomToken()) {
    this.adminToken = adminToken;
    this.tokens.set(adminToken, { name: 'troupe-admin', groups: ['system:masters', 'system:authenticated'] });
  }

  authenticate(req: IncomingMessage): UserInfo | undefined {
    const h = req.headers.authorization;
    if (!h?.startsWith('Bearer ')) return undefined;
    return this.authenticateToken(h.slice(7).trim());
  }

  /** The user a bearer token authenticates as (TokenReview asks this too). */
  authenticateToken(token: string): UserInfo | undefined {
    const expires = this.expiry.get(token);
    if (expires !== undefined && expires <= Date.now()) {
      this.tokens.delete(token);
      this.expiry.delete(token);
      return undefined;
    }
    const user = this.tokens.get(token);
    if (!user) return undefined;
    // Map lookup already matched; compare again in constant time so response timing
    // does not depend on how much of a guessed admin token was right.
    const a = Buffer.from(token);
    const b = Buffer.from(token === this.adminToken ? this.adminToken : token);
    return a.length === b.length && timingSafeEqual(a, b) ? user : undefined;
  }

  /** Mints a token for a service account (what TokenRequest does on a real cluster). */
  mintServiceAccountToken(namespace: string, name: string, expiresAt?: number): string {
    const token = randomToken();
    this.tokens.set(token, this.impersonated(`system:serviceaccount:${namespace}:${name}`, []));
    if (expiresAt !== undefined) this.expiry.set(token, expiresAt);
    return token;
  }

  /** The user an `Impersonate-User` header names, with the groups a real server adds. */
  impersonated(name: string, groups: string[]): UserInfo {
    const all = new Set(groups);
    const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(name);
    if (sa) {
      all.add('system:serviceaccounts');
      all.add(`system:serviceaccounts:${sa[1]}`);
    }
    all.add('system:authenticated');
    return { name, groups: [...all] };
  }
}

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}
