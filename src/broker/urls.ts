// URL helpers shared by providers and reports: masking passwords and deriving credentials.

/** The URL with its password replaced by ***, for reports and logs. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
  }
}

export function credentials(url: string): { user: string; pass: string } {
  const u = new URL(url);
  return { user: decodeURIComponent(u.username) || 'guest', pass: decodeURIComponent(u.password) || 'guest' };
}

/** Management URL carrying the AMQP URL's credentials when it has none of its own. */
export function withCredentials(managementUrl: string, amqpUrl: string): string {
  const m = new URL(managementUrl);
  if (!m.username) {
    const { user, pass } = credentials(amqpUrl);
    m.username = encodeURIComponent(user);
    m.password = encodeURIComponent(pass);
  }
  return m.toString();
}

/** The AMQP URL pointed at another vhost. */
export function amqpUrlForVhost(amqpUrl: string, vhost: string): string {
  const u = new URL(amqpUrl);
  u.pathname = '/' + encodeURIComponent(vhost);
  return u.toString();
}
