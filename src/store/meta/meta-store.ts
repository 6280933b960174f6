/** Named values the instance keeps about itself (the bootstrap's marks, the embedded chains' owners...). */
export interface MetaStore {
  getMeta(name: string): Promise<string | undefined>;
  setMeta(name: string, value: string): Promise<void>;
}
