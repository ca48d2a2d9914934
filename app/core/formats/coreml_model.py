"""Walk a Core ML ``Model`` (.mlmodel) to what loading it needs besides Core ML itself.

From coremltools' mlmodel/format/*.proto:
  Model: specificationVersion 1, description 2; the model type is a oneof from field 200:
    pipelineClassifier 200, pipelineRegressor 201 (each: pipeline 1), pipeline 202 (models 1),
    neuralNetworkRegressor 303, neuralNetworkClassifier 403, neuralNetwork 500 (each: layers 1),
    customModel 555 (className 10), linkedModel 556 (linkedModelFile 1)
  NeuralNetworkLayer: name 1, custom 500 (CustomLayerParams: className 10)
  LinkedModelFile: linkedModelFileName 1, linkedModelSearchPath 2 (StringParameter: defaultValue 1)
A custom layer or custom model names an Objective-C/Swift class the application must compile
in (``MLCustomLayer``/``MLCustomModel``): native code the model cannot bring but needs. A linked
model makes Core ML load another compiled model found along the search path, which may be
absolute. Pipelines nest models, which are walked the same way. Weights are jumped over.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from app.core.formats.protobuf_wire import LEN
from app.core.formats.ranged_wire import RangeField, RangeMessage, Walk

MODEL_SPEC_VERSION, MODEL_PIPELINE_CLASSIFIER, MODEL_PIPELINE_REGRESSOR, MODEL_PIPELINE = 1, 200, 201, 202
NEURAL_NETWORKS = (303, 403, 500)
MODEL_CUSTOM, MODEL_LINKED = 555, 556
PIPELINE_WRAPPED, PIPELINE_MODELS = 1, 1
NETWORK_LAYERS = 1
LAYER_NAME, LAYER_CUSTOM = 1, 500
CUSTOM_CLASS_NAME = 10
LINKED_FILE, LINKED_FILE_NAME, LINKED_SEARCH_PATH, STRING_DEFAULT = 1, 1, 2, 1


@dataclass
class CoremlModel:
    models: int = 0
    custom_layers: list[tuple[str, str]] = field(default_factory=list)  # (class name, where)
    custom_models: list[tuple[str, str]] = field(default_factory=list)
    linked: list[tuple[str, str, str]] = field(default_factory=list)  # (file name, search path, where)


def walk_coreml(walk: Walk, found: CoremlModel) -> None:
    _model(walk, walk.top(), "model", found)


def _len_fields(message: RangeMessage) -> Iterator[RangeField]:
    return (item for item in message.fields() if item.wire_type == LEN)


def _model(walk: Walk, model: RangeMessage, where: str, found: CoremlModel) -> None:
    found.models += 1
    for item in _len_fields(model):
        if item.number in (MODEL_PIPELINE_CLASSIFIER, MODEL_PIPELINE_REGRESSOR):
            for pipeline in _len_fields(model.nested(item)):
                if pipeline.number == PIPELINE_WRAPPED:
                    _pipeline(walk, model.nested(item).nested(pipeline), where, found)
        elif item.number == MODEL_PIPELINE:
            _pipeline(walk, model.nested(item), where, found)
        elif item.number in NEURAL_NETWORKS:
            _network(walk, model.nested(item), where, found)
        elif item.number == MODEL_CUSTOM:
            found.custom_models.append((_string(walk, model.nested(item), CUSTOM_CLASS_NAME), where))
        elif item.number == MODEL_LINKED:
            _linked(walk, model.nested(item), where, found)


def _pipeline(walk: Walk, pipeline: RangeMessage, where: str, found: CoremlModel) -> None:
    index = 0
    for item in _len_fields(pipeline):
        if item.number == PIPELINE_MODELS:
            _model(walk, pipeline.nested(item), f"{where} pipeline[{index}]", found)
            index += 1


def _network(walk: Walk, network: RangeMessage, where: str, found: CoremlModel) -> None:
    index = 0
    for item in _len_fields(network):
        if item.number != NETWORK_LAYERS:
            continue
        layer = network.nested(item)
        name = _string(walk, layer, LAYER_NAME)
        for part in _len_fields(layer):
            if part.number == LAYER_CUSTOM:
                found.custom_layers.append((_string(walk, layer.nested(part), CUSTOM_CLASS_NAME),
                                            f"{where} layer[{index}] {name!r}"))
        index += 1


def _linked(walk: Walk, linked: RangeMessage, where: str, found: CoremlModel) -> None:
    for item in _len_fields(linked):
        if item.number != LINKED_FILE:
            continue
        link = linked.nested(item)
        names = {number: "" for number in (LINKED_FILE_NAME, LINKED_SEARCH_PATH)}
        for part in _len_fields(link):
            if part.number in names:
                names[part.number] = _string(walk, link.nested(part), STRING_DEFAULT)
        found.linked.append((names[LINKED_FILE_NAME], names[LINKED_SEARCH_PATH], where))


def _string(walk: Walk, message: RangeMessage, number: int) -> str:
    values = [item.text(walk) for item in _len_fields(message) if item.number == number]
    return values[-1] if values else ""
