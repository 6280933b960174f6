/** One positional parameter, as the OpenRPC document describes it. */
export interface ParamSchema {
  name: string;
  required: boolean;
  schema: Record<string, unknown>;
}

export interface MethodSchema {
  params: ParamSchema[];
  /** Schema of the result, used by the tests to check shapes. */
  result: Record<string, unknown>;
}
