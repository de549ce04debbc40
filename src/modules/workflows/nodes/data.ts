import { Type } from 'typebox';
import { registerNode } from './registry.ts';
import { main } from './types.ts';

registerNode({
  type: 'data.set',
  category: 'data',
  description: 'Sets fields on each item (values may be `{{ … }}` expressions on the item); `keepOnlySet` drops the other fields.',
  params: Type.Object(
    {
      fields: Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.Unknown(), { maxProperties: 100 }),
      keepOnlySet: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  outputs: ['main'],
  pure: true,
  async execute(_ctx, exec) {
    const out = [];
    for (const item of exec.items) {
      const params = await exec.params(item);
      out.push(params.keepOnlySet ? { ...params.fields } : { ...item, ...params.fields });
    }
    return main(out);
  },
});
