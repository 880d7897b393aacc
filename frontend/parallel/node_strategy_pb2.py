# -*- coding: utf-8 -*-
# MindSpore's strategy checkpoint schema (mindspore/ccsrc/.../node_strategy.proto, package mindspore.straspb):
# the serialized descriptor of MindSpore 2.10's generated mindspore/train/node_strategy_pb2.py, loaded with the
# builder API as traces/et_def_pb2.py is (protobuf >= 3.20). Messages: ParallelStrategyMap (the file),
# ParallelStrategyItem (an op's strategy), ParallelLayoutItem (a Parameter's layout).
"""Generated protocol buffer code."""
from google.protobuf import descriptor_pool as _descriptor_pool
from google.protobuf import symbol_database as _symbol_database
from google.protobuf.internal import builder as _builder

_sym_db = _symbol_database.Default()

DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile(b'\n\x13node_strategy.proto\x12\x11mindspore.straspb\"\x1f\n\x10ParallelStrategy\x12\x0b\n\x03\x64im\x18\x01 \x03(\r\"b\n\x11ParallelStrategys\x12\r\n\x05stage\x18\x01 \x02(\r\x12>\n\x11parallel_strategy\x18\x02 \x03(\x0b\x32#.mindspore.straspb.ParallelStrategy\"k\n\x14ParallelStrategyItem\x12\x11\n\tnode_name\x18\x01 \x02(\t\x12@\n\x12parallel_strategys\x18\x02 \x02(\x0b\x32$.mindspore.straspb.ParallelStrategys\"\x18\n\tDevMatrix\x12\x0b\n\x03\x64im\x18\x01 \x03(\r\"\x18\n\tTensorMap\x12\x0b\n\x03\x64im\x18\x01 \x03(\x05\"\x1e\n\x0fParamSplitShape\x12\x0b\n\x03\x64im\x18\x01 \x03(\x03\"\x1c\n\rIndicesOffset\x12\x0b\n\x03\x64im\x18\x01 \x03(\x03\"\xbb\x02\n\x0fParallelLayouts\x12\x30\n\ndev_matrix\x18\x01 \x03(\x0b\x32\x1c.mindspore.straspb.DevMatrix\x12\x30\n\ntensor_map\x18\x02 \x03(\x0b\x32\x1c.mindspore.straspb.TensorMap\x12=\n\x11param_split_shape\x18\x03 \x03(\x0b\x32\".mindspore.straspb.ParamSplitShape\x12\x38\n\x0eindices_offset\x18\x04 \x03(\x0b\x32 .mindspore.straspb.IndicesOffset\x12\r\n\x05\x66ield\x18\x05 \x02(\x05\x12\x1d\n\x15opt_weight_shard_step\x18\x06 \x02(\x05\x12\x1d\n\x15opt_weight_shard_size\x18\x07 \x02(\x05\"f\n\x12ParallelLayoutItem\x12\x12\n\nparam_name\x18\x01 \x02(\t\x12<\n\x10parallel_layouts\x18\x02 \x02(\x0b\x32\".mindspore.straspb.ParallelLayouts\"!\n\x12ParallelGroupRanks\x12\x0b\n\x03\x64im\x18\x01 \x03(\r\"l\n\x11ParallelGroupItem\x12\x12\n\ngroup_name\x18\x01 \x02(\t\x12\x43\n\x14parallel_group_ranks\x18\x02 \x02(\x0b\x32%.mindspore.straspb.ParallelGroupRanks\"\x9c\x01\n\x10ParallelGroupMap\x12\x41\n\x13parallel_group_item\x18\x01 \x03(\x0b\x32$.mindspore.straspb.ParallelGroupItem\x12\x45\n\x16\x63kpt_restore_rank_list\x18\x02 \x02(\x0b\x32%.mindspore.straspb.ParallelGroupRanks\"\xba\x01\n\x13ParallelStrategyMap\x12\x15\n\rcurrent_stage\x18\x01 \x02(\r\x12G\n\x16parallel_strategy_item\x18\x02 \x03(\x0b\x32\'.mindspore.straspb.ParallelStrategyItem\x12\x43\n\x14parallel_layout_item\x18\x03 \x03(\x0b\x32%.mindspore.straspb.ParallelLayoutItem')

_globals = globals()
_builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, _globals)
_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, 'node_strategy_pb2', _globals)
