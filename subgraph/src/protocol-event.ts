// The generic ProtocolEvent record that every handler writes first, so the event stream
// (GET /v1/events) covers every event of every tracked contract, decoded, in chain order.
// It also holds the handlers of OpenZeppelin's Ownable/AccessControl events of the protocol's
// own contracts, which need nothing beyond this record and concern no fund; each mapping file
// re-exports the ones its ABI declares (a vault's own are in fund-vault.ts: they concern its fund).
import { BigInt, Bytes, ethereum } from '@graphprotocol/graph-ts';
import { ProtocolEvent } from '../generated/schema';
import { eventId } from './entity-ids';

/** Records `event` as `eventName`; `fund` is the vault it concerns, null when none (see the schema). */
export function recordProtocolEvent(event: ethereum.Event, eventName: string, fund: Bytes | null): void {
  const record = new ProtocolEvent(eventId(event));
  record.contract = event.address;
  record.fund = fund;
  record.eventName = eventName;
  record.blockNumber = event.block.number;
  record.timestamp = event.block.timestamp;
  record.txHash = event.transaction.hash;
  record.logIndex = event.logIndex;
  // blockNumber * 2^32 + logIndex: one integer that orders events by (block, log index).
  record.sortKey = event.block.number.times(BigInt.fromU64(4294967296)).plus(event.logIndex);
  record.args = argsJson(event.parameters);
  record.save();
}

export function handleOwnershipTransferred(event: ethereum.Event): void {
  recordProtocolEvent(event, 'OwnershipTransferred', null);
}

export function handleRoleGranted(event: ethereum.Event): void {
  recordProtocolEvent(event, 'RoleGranted', null);
}

export function handleRoleRevoked(event: ethereum.Event): void {
  recordProtocolEvent(event, 'RoleRevoked', null);
}

export function handleRoleAdminChanged(event: ethereum.Event): void {
  recordProtocolEvent(event, 'RoleAdminChanged', null);
}

/** The event's parameters as one JSON object text, keyed by the ABI's parameter names. */
function argsJson(parameters: Array<ethereum.EventParam>): string {
  const members = new Array<string>(parameters.length);
  for (let i = 0; i < parameters.length; i++) {
    members[i] = jsonString(parameters[i].name) + ':' + jsonValue(parameters[i].value);
  }
  return '{' + members.join(',') + '}';
}

/** Integers become decimal strings (they exceed JSON's safe range); bytes and addresses 0x hex. */
function jsonValue(value: ethereum.Value): string {
  switch (value.kind) {
    case ethereum.ValueKind.ADDRESS:
      return jsonString(value.toAddress().toHexString());
    case ethereum.ValueKind.FIXED_BYTES:
    case ethereum.ValueKind.BYTES:
      return jsonString(value.toBytes().toHexString());
    case ethereum.ValueKind.INT:
    case ethereum.ValueKind.UINT:
      return jsonString(value.toBigInt().toString());
    case ethereum.ValueKind.BOOL:
      return value.toBoolean() ? 'true' : 'false';
    case ethereum.ValueKind.STRING:
      return jsonString(value.toString());
    case ethereum.ValueKind.FIXED_ARRAY:
    case ethereum.ValueKind.ARRAY:
      return jsonArray(value.toArray());
    default:
      // A tuple carries no component names in graph-ts, so it is written as an array.
      return jsonArray(value.toTuple());
  }
}

function jsonArray(values: Array<ethereum.Value>): string {
  const items = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    items[i] = jsonValue(values[i]);
  }
  return '[' + items.join(',') + ']';
}

/** A JSON string literal, escaped as JSON.stringify escapes it. */
function jsonString(text: string): string {
  // Names, hex and decimal digits need no escaping: one concatenation instead of one string per character.
  if (!needsEscaping(text)) return '"' + text + '"';
  const parts = new Array<string>(0);
  parts.push('"');
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code == 0x22) parts.push('\\"');
    else if (code == 0x5c) parts.push('\\\\');
    else if (code == 0x08) parts.push('\\b');
    else if (code == 0x09) parts.push('\\t');
    else if (code == 0x0a) parts.push('\\n');
    else if (code == 0x0c) parts.push('\\f');
    else if (code == 0x0d) parts.push('\\r');
    else if (code < 0x20) parts.push('\\u00' + (code < 0x10 ? '0' : '') + code.toString(16));
    else parts.push(String.fromCharCode(code));
  }
  parts.push('"');
  return parts.join('');
}

function needsEscaping(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code == 0x22 || code == 0x5c) return true;
  }
  return false;
}
