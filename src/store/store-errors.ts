/** A uniqueness or reference rule refused a write (duplicate email, plan in use, unknown plan...). */
export class StoreConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreConflictError';
  }
}
