"""TensorFlow op names sorted by what running them can do (names as in tf.raw_ops)."""

from __future__ import annotations

# Call back into Python: a py_function's code runs in the loading process.
PYTHON_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})

# Checkpoint ops -> how many of their first inputs are paths. Every SavedModel's saver has
# them, with the path fed by the loader (a placeholder or a function argument upstream).
CHECKPOINT_OPS: dict[str, int] = {
    "Save": 1, "SaveV2": 1, "SaveSlices": 1, "Restore": 1, "RestoreV2": 1, "RestoreSlice": 1,
    "MergeV2Checkpoints": 2,
}
FED_BY_LOADER = frozenset({"Placeholder", "PlaceholderWithDefault"})

# Read, write or list files, or talk to another host. Checkpoint ops take a path tensor,
# so a graph can hardcode one; debug ops send tensors to their debug_urls (file://, grpc://).
_FILE_OPS = {
    "ReadFile", "WriteFile", "MatchingFiles", "FileSystemSetConfiguration",
    *CHECKPOINT_OPS,
    "ImmutableConst", "LoadAndRemapMatrix", "InitializeTableFromTextFile",
    "InitializeTableFromTextFileV2", "WholeFileReader", "WholeFileReaderV2", "TextLineReader",
    "TextLineReaderV2", "FixedLengthRecordReader", "FixedLengthRecordReaderV2", "TFRecordReader",
    "TFRecordReaderV2", "LMDBReader", "TextLineDataset", "TFRecordDataset", "TFRecordDatasetV2",
    "FixedLengthRecordDataset", "FixedLengthRecordDatasetV2", "LMDBDataset", "ExperimentalLMDBDataset",
    "CSVDataset", "CSVDatasetV2", "ExperimentalCSVDataset", "SqlDataset", "ExperimentalSqlDataset",
    "DatasetToTFRecord", "ExperimentalDatasetToTFRecord", "SaveDataset", "SaveDatasetV2",
    "LoadDataset", "SnapshotDataset", "SnapshotDatasetV2", "CacheDataset", "CacheDatasetV2",
    "CreateSummaryFileWriter", "CreateSummaryDbWriter", "DecodeProtoV2", "EncodeProto",
    "PrintV2",  # output_stream may be file://...
}
_NETWORK_OPS = {
    "DebugIdentity", "DebugIdentityV2", "DebugIdentityV3", "DebugNanCount", "DebugNumericSummary",
    "DebugNumericSummaryV2", "RpcClient", "RpcCall", "RpcServer", "RpcServerStart",
    "RpcServerRegister", "DataServiceDataset", "DataServiceDatasetV2", "DataServiceDatasetV3",
    "DataServiceDatasetV4", "RegisterDataset", "RegisterDatasetV2", "DistributedSave",
    "GcsConfigureCredentials", "GcsConfigureBlockCache", "_Send", "_Recv", "_HostSend", "_HostRecv",
}
IO_OPS = frozenset(_FILE_OPS | _NETWORK_OPS)

# Ops a plain inference graph is made of (a curated subset of tf.raw_ops; anything else is
# reported as unknown for review, never as dangerous).
_KNOWN_OP_NAMES = """
Const Placeholder PlaceholderWithDefault Identity IdentityN NoOp StopGradient Snapshot
VarHandleOp ReadVariableOp AssignVariableOp AssignAddVariableOp AssignSubVariableOp VarIsInitializedOp
Variable VariableV2 Assign AssignAdd AssignSub DestroyResourceOp ResourceGather
PartitionedCall StatefulPartitionedCall If StatelessIf While StatelessWhile Case StatelessCase
MatMul BatchMatMul BatchMatMulV2 BatchMatMulV3 BiasAdd Conv2D Conv3D DepthwiseConv2dNative
Conv2DBackpropInput MaxPool AvgPool MaxPoolV2 FusedBatchNorm FusedBatchNormV3 LRN
Relu Relu6 Elu Selu LeakyRelu Sigmoid Tanh Softmax LogSoftmax Softplus Softsign Erf Gelu
Add AddV2 AddN Sub Mul RealDiv Div DivNoNan FloorDiv FloorMod Mod Maximum Minimum Pow
Neg Abs Sqrt Rsqrt Square SquaredDifference Exp Log Log1p Reciprocal Sign Floor Ceil Round
Mean Sum Prod Max Min ArgMax ArgMin All Any Cumsum Cumprod
Equal NotEqual Less LessEqual Greater GreaterEqual LogicalAnd LogicalOr LogicalNot Select SelectV2
Cast Bitcast Reshape Shape ShapeN Size Rank Squeeze ExpandDims Transpose ConjugateTranspose
Pack Unpack Concat ConcatV2 Split SplitV Slice StridedSlice Tile Pad PadV2 MirrorPad Fill
ZerosLike OnesLike Range Gather GatherV2 GatherNd ScatterNd OneHot Where BroadcastTo
BroadcastArgs ResizeBilinear ResizeNearestNeighbor TopKV2 Einsum Unique Reverse ReverseV2
StringJoin ShardedFilename StaticRegexFullMatch RegexReplace StringFormat Merge Switch Enter
Exit NextIteration LoopCond Assert CheckNumerics EnsureShape
RandomUniform RandomStandardNormal TruncatedNormal StatelessRandomUniformV2
StatelessRandomNormalV2 StatelessTruncatedNormalV2 StatelessRandomGetKeyCounter
HashTableV2 MutableHashTableV2 LookupTableFindV2 LookupTableImportV2 LookupTableSizeV2
_Arg _Retval
"""
KNOWN_OPS = frozenset(_KNOWN_OP_NAMES.split())
