// Provider for a broker that is already running (a workflow `services:` container, a local
// server): checks that AMQP accepts a connection and the management API answers, records what
// the broker is. It starts nothing, so stop() does nothing.
import amqp from 'amqplib';
import { GateError } from '../schema/errors';
import type { UrlTargetSpec } from '../schema/types';
import { ManagementClient } from './management';
import type { BrokerHandle } from './provider';
import { type EvidenceCapture, evidenceCapture, probePrometheus } from './evidence';
import { maskUrl, withCredentials } from './urls';
import { readEndpoints } from './endpoints';

export async function checkAmqp(amqpUrl: string, field = 'broker-url', timeoutMs = 10_000): Promise<void> {
  let conn: amqp.ChannelModel | undefined;
  try {
    conn = await amqp.connect(amqpUrl, { timeout: timeoutMs });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const tls = amqpUrl.startsWith('amqps:');
    const why =
      e.code === 'ECONNREFUSED'
        ? 'connection refused'
        : // TLS first: OpenSSL's messages carry hex codes that can contain "403".
          tls && (/^ERR_SSL_|^ECONNRESET$/.test(e.code ?? '') || /SSL routines|wrong version number/i.test(e.message))
          ? `TLS handshake failed (${e.code ?? 'TLS error'}): the port does not speak TLS, or its certificate is not trusted`
          : /ACCESS_REFUSED|\b403\b/.test(e.message)
            ? 'wrong user name or password'
            : /ETIMEDOUT/.test(`${e.code} ${e.message}`)
              ? `no AMQP answer within ${timeoutMs / 1000} s (a hung or paused broker, or a firewall)`
              : /closed abruptly during opening handshake/.test(e.message)
                ? 'the port closed the connection during the AMQP handshake (not an AMQP port, or amqp:// to a TLS port)'
                : e.message.split('\n')[0];
    throw new GateError(
      `cannot connect to the broker at ${maskUrl(amqpUrl)}: ${why}`,
      { field },
      tls
        ? "amqps:// needs the broker's TLS listener (usually port 5671) and a certificate this runner trusts; use amqp:// for the plain port (5672)"
        : 'check that RabbitMQ is running and the URL (host, port, user, password, vhost) is right',
    );
  }
  await conn.close().catch(() => undefined);
}

export async function attachExisting(spec: UrlTargetSpec): Promise<BrokerHandle> {
  await checkAmqp(spec.amqpUrl);
  const managementUrl = withCredentials(spec.managementUrl, spec.amqpUrl);
  const mgmt = new ManagementClient(managementUrl);
  const [id, endpoints, evidence] = await Promise.all([mgmt.identity(), readEndpoints(mgmt, spec.amqpUrl).catch(() => ({})), urlEvidence(managementUrl)]);
  return {
    amqpUrl: spec.amqpUrl,
    managementUrl,
    ...(evidence.sources.length ? { evidence } : {}),
    info: {
      id: spec.id,
      label: spec.label,
      kind: 'url',
      amqpUrl: maskUrl(spec.amqpUrl),
      managementUrl: mgmt.publicUrl,
      rabbitmqVersion: id.rabbitmqVersion,
      erlangVersion: id.erlangVersion,
      metadataStore: id.metadataStore,
      nodes: id.nodes,
      endpoints,
      evidence: { sources: evidence.sources, missing: evidence.missing },
    },
    stop: async () => undefined,
  };
}

/**
 * A broker attached by URL offers what its Prometheus endpoint shows, looked for on the management
 * API's host at rabbitmq_prometheus's default port (15692). This tool runs nothing in it: the
 * scheduler split needs microstate accounting switched on by its operator, and its process's CPU
 * and disk accounting are not this runner's to read.
 */
async function urlEvidence(managementUrl: string): Promise<EvidenceCapture> {
  const u = new URL(managementUrl);
  const promUrl = `${u.protocol}//${u.hostname}:15692/metrics`; // hostname keeps an IPv6 address's brackets
  const found = await probePrometheus(promUrl);
  const missing: EvidenceCapture['missing'] = [];
  if (!found.vm) missing.push({ source: 'prometheus', why: `no rabbitmq_prometheus answer at ${promUrl} (enable the plugin on its default port)` });
  else if (!found.msacc) {
    missing.push({ source: 'msacc', why: "microstate accounting is off in the broker (`rabbitmqctl eval 'erlang:system_flag(microstate_accounting, true).'` switches it on)" });
  }
  missing.push({ source: 'cgroup', why: "a broker attached by URL: its process's CPU and disk accounting are not this runner's" });
  return evidenceCapture({ prometheusUrls: found.vm ? [promUrl] : [], msacc: found.msacc, missing });
}
