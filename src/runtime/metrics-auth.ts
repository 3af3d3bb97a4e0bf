/**
 * Authentication and authorization of the metrics endpoint, as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` (what kubebuilder's scaffold turns on with
 * `--metrics-secure`) does it: the caller's bearer token goes to a TokenReview, the user it
 * names to a SubjectAccessReview for the request's path and verb (`get` on `/metrics`, which
 * the `metrics-reader` ClusterRole grants). Answers are text, with controller-runtime's
 * wording. Authenticated tokens and allowed decisions are cached briefly, as its delegating
 * authenticator and authorizer do, so a scraper does not cost two API calls per scrape; a
 * denial is not cached, so a role bound afterwards takes effect at once.
 */
import type { IncomingMessage } from 'node:http';
import { realClock } from '../lib/clock.ts';
import type { RestClient } from './rest.ts';

export interface Denial {
  code: 401 | 403 | 500;
  message: string;
}

interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** How long an authenticated token and an allowed decision are reused. */
const CACHE_MS = 10_000;

export class MetricsAuth {
  private readonly rest: RestClient;
  private readonly users = new Map<string, { user: UserInfo | undefined; until: number }>();
  private readonly allowed = new Map<string, number>();

  constructor(rest: RestClient) {
    this.rest = rest;
  }

  /** Undefined when the request may proceed, else what to answer. */
  async check(req: IncomingMessage, path: string): Promise<Denial | undefined> {
    const header = req.headers.authorization ?? '';
    const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    if (!token) return { code: 401, message: 'Unauthorized' };
    let user: UserInfo | undefined;
    try {
      user = await this.authenticate(token);
    } catch {
      return { code: 401, message: 'Authentication failed' };
    }
    if (!user?.username) return { code: 401, message: 'Unauthorized' };
    const verb = (req.method ?? 'GET').toLowerCase();
    try {
      if (await this.authorize(user, path, verb)) return undefined;
    } catch {
      return { code: 500, message: `Authorization for user ${user.username} failed` };
    }
    return { code: 403, message: `Authorization denied for user ${user.username}` };
  }

  private async authenticate(token: string): Promise<UserInfo | undefined> {
    const now = realClock.monotonic();
    const cached = this.users.get(token);
    if (cached && cached.until > now) return cached.user;
    const review = await this.rest.request<{ status?: { authenticated?: boolean; user?: UserInfo } }>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/tokenreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    });
    const user = review.status?.authenticated ? review.status.user : undefined;
    this.users.set(token, { user, until: now + CACHE_MS });
    return user;
  }

  private async authorize(user: UserInfo, path: string, verb: string): Promise<boolean> {
    const now = realClock.monotonic();
    const key = JSON.stringify([user.username, user.groups ?? [], path, verb]);
    if ((this.allowed.get(key) ?? 0) > now) return true;
    const review = await this.rest.request<{ status?: { allowed?: boolean } }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          uid: user.uid,
          groups: user.groups,
          extra: user.extra,
          nonResourceAttributes: { path, verb },
        },
      },
    });
    const allowed = review.status?.allowed === true;
    if (allowed) this.allowed.set(key, now + CACHE_MS);
    return allowed;
  }
}
