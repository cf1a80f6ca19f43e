/**
 * Text columns created by the migrations on PostgreSQL compare and sort by code point (`collate "C"`), as SQLite's
 * default BINARY collation does, whatever collation the database was created with: listings sort, `<`/`>` and
 * the role-attribute ranges (`'#' <= v < '$'`) then agree on both stores.
 */
import {
  OperationNodeTransformer,
  RawNode,
  type ColumnDefinitionNode,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

class CollateText extends OperationNodeTransformer {
  protected override transformColumnDefinition(node: ColumnDefinitionNode): ColumnDefinitionNode {
    const out = super.transformColumnDefinition(node);
    const type = out.dataType as { kind: string; dataType?: string };
    if (type.kind !== 'DataTypeNode' || type.dataType !== 'text') return out;
    return { ...out, dataType: RawNode.createWithSql('text collate "C"') };
  }
}

export class TextCollationPlugin implements KyselyPlugin {
  private readonly transformer = new CollateText();
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node);
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}
