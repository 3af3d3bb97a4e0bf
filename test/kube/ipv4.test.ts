import assert from 'node:assert/strict';
import { test } from 'node:test';
import { intToIpv4, ipv4ToInt, parseIPv4CIDR } from '../../src/kube/ipv4.ts';

test('IPv4 addresses round-trip through integers; non-addresses are undefined', () => {
  assert.equal(ipv4ToInt('10.96.0.1'), 10 * 2 ** 24 + 96 * 2 ** 16 + 1);
  assert.equal(intToIpv4(ipv4ToInt('255.255.255.255')!), '255.255.255.255');
  for (const bad of ['10.96.0', '10.96.0.256', 'a.b.c.d', '10.96.0.1/12'])
    assert.equal(ipv4ToInt(bad), undefined, bad);
});

test('a CIDR gives its network, prefix and size; the host bits are cleared', () => {
  assert.deepEqual(parseIPv4CIDR('10.96.7.9/12'), {
    network: ipv4ToInt('10.96.0.0'),
    prefix: 12,
    size: 2 ** 20,
  });
  assert.deepEqual(parseIPv4CIDR('192.168.1.5/32'), {
    network: ipv4ToInt('192.168.1.5'),
    prefix: 32,
    size: 1,
  });
  for (const bad of ['10.96.0.0', '10.96.0.0/33', '10.96.0.0/x', '10.96.0.0/12/1', '::1/64'])
    assert.equal(parseIPv4CIDR(bad), undefined, bad);
});
