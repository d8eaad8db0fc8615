// Numeric identifiers shared with the compiled mapping: graph-ts's `TypeId` discriminants (passed to
// the module's exported `id_of_type` to learn each class's runtime id) and the `kind` tags of the
// enum-like classes (store Value, ethereum.Value, JSONValue; YAMLValue's are in host-yaml.ts). They must equal graph-ts 0.38's values,
// which mirror graph-node's `IndexForAscTypeId` and its `*ValueKind` enums.

/** graph-ts `TypeId` discriminants of the classes the host allocates. */
export const TypeId = {
  String: 0,
  ArrayBuffer: 1,
  Uint8Array: 6,
  BigDecimal: 12,
  ArrayUint8Array: 14,
  ArrayEthereumValue: 15,
  ArrayStoreValue: 16,
  ArrayJsonValue: 17,
  ArrayString: 18,
  ArrayEventParam: 19,
  ArrayTypedMapEntryStringJsonValue: 20,
  ArrayTypedMapEntryStringStoreValue: 21,
  EventParam: 23,
  EthereumTransaction: 24,
  EthereumBlock: 25,
  EthereumCall: 26,
  WrappedBool: 28,
  WrappedJsonValue: 29,
  EthereumValue: 30,
  StoreValue: 31,
  JsonValue: 32,
  EthereumEvent: 33,
  TypedMapEntryStringStoreValue: 34,
  TypedMapEntryStringJsonValue: 35,
  TypedMapStringStoreValue: 36,
  TypedMapStringJsonValue: 37,
  ResultJsonValueBool: 40,
  TransactionReceipt: 1000,
  Log: 1001,
  ArrayH256: 1002,
  ArrayLog: 1003,
  ArrayTypedMapStringStoreValue: 1004,
  YamlValue: 5500,
  YamlTaggedValue: 5501,
  YamlTypedMapEntryValueValue: 5502,
  YamlTypedMapValueValue: 5503,
  YamlArrayValue: 5504,
  YamlArrayTypedMapEntryValueValue: 5505,
  YamlWrappedValue: 5506,
  YamlResultValueBool: 5507,
} as const;
export type TypeIdName = keyof typeof TypeId;

/** graph-ts `ValueKind` (store values). */
export const StoreValueKind = {
  String: 0,
  Int: 1,
  BigDecimal: 2,
  Bool: 3,
  Array: 4,
  Null: 5,
  Bytes: 6,
  BigInt: 7,
  Int8: 8,
  Timestamp: 9,
} as const;

/** graph-ts `ethereum.ValueKind`. */
export const EthereumValueKind = {
  Address: 0,
  FixedBytes: 1,
  Bytes: 2,
  Int: 3,
  Uint: 4,
  Bool: 5,
  String: 6,
  FixedArray: 7,
  Array: 8,
  Tuple: 9,
} as const;

/** graph-ts `JSONValueKind`. */
export const JsonValueKind = {
  Null: 0,
  Bool: 1,
  Number: 2,
  String: 3,
  Array: 4,
  Object: 5,
} as const;

/** Size of the AssemblyScript 0.19 object header: mmInfo, gcInfo, gcInfo2, rtId, rtSize (u32 each). */
export const HEADER_SIZE = 20;
