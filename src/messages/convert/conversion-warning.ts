/** Something a conversion could not carry into the target format. Returned, never thrown. */
export interface ConversionWarning {
  type: 'conversion-warning';
  /** Index of the source message. */
  index: number;
  /** Path of the part or field inside it, e.g. `content[1]`. */
  path?: string;
  message: string;
}
