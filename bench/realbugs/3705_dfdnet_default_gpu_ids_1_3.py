# source: https://github.com/csxmli2016/DFDNet/issues/7
# error: RuntimeError: cuda runtime error (101) : invalid device ordinal
#        (test_FaceDict.py, opt = TestOptions().parse() -> options/base_options.py line 114,
#        torch.cuda.set_device(opt.gpu_ids[0]))
# bug: options/base_options.py defaults --gpu_ids to '1,3', the authors' GPUs; BaseOptions.parse turns it into
#      [1, 3] and calls torch.cuda.set_device(opt.gpu_ids[0]) before test_FaceDict.py can override opt.gpu_ids, so on
#      a one-GPU machine the test script fails while parsing its options. A commenter: "fixed it by switching default
#      gpu on line 22 of base_options.py to (0) rather than (1,3)"; the authors' commit 59c5607 ("Update the whole
#      pipeline") changes the default to '0'. That default line is marked. No rule names a hard-coded default GPU
#      index; DL302 (hard-coded cuda) is the closest, the set_device line being where it fails.
#      Reductions: BaseOptions/TestOptions keep the parse machinery (gather_options, print_options, the gpu-id loop)
#      but a subset of the options; gather_options' models/data option-setter hooks (importlib look-ups of
#      models/test_model.py and data/aligned_dataset.py) and print_options' opt.txt file are dropped; test_FaceDict.py
#      keeps its option overrides and stops before the dlib/face_alignment pipeline. Needs CUDA to reach the bug.
import argparse

import torch


class BaseOptions():
    def __init__(self):
        self.initialized = False

    def initialize(self, parser):

        parser.add_argument('--batchSize', type=int, default=2, help='input batch size')
        parser.add_argument('--loadSize', type=int, default=550, help='scale images to this size')
        parser.add_argument('--fineSize', type=int, default=512, help='then crop to this size')
        parser.add_argument('--which_model_netG', type=str, default='encoderVggDecoderResNet', help='selects model to use for netG')
        parser.add_argument('--gpu_ids', type=str, default='1,3', help='gpu ids: e.g. 0  0,1,2, 0,2. use -1 for CPU')  # expect: DL302
        parser.add_argument('--name', type=str, default='facefh_dictionary', help='name of the experiment. It decides where to store samples and models')
        parser.add_argument('--dataset_mode', type=str, default='aligned', help='chooses how datasets are loaded. [unaligned | aligned | single]')
        parser.add_argument('--model', type=str, default='faceDict', help='chooses which model to use. cycle_gan, pix2pix, test')
        parser.add_argument('--nThreads', default=8, type=int, help='# threads for loading data')
        parser.add_argument('--checkpoints_dir', type=str, default='./checkpoints', help='models are saved here')
        parser.add_argument('--serial_batches', action='store_true', help='if true, takes images in order to make batches, otherwise takes them randomly')
        parser.add_argument('--display_id', type=int, default=1, help='window id of the web display')
        parser.add_argument('--no_flip', action='store_true', help='if specified, do not flip the images for data augmentation')
        parser.add_argument('--suffix', default='', type=str, help='customized suffix: opt.name = opt.name + suffix: e.g., {model}_{which_model_netG}_size{loadSize}')
        self.initialized = True
        return parser

    def gather_options(self):
        # initialize parser with basic options
        if not self.initialized:
            parser = argparse.ArgumentParser(
                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
            parser = self.initialize(parser)

        self.parser = parser

        return parser.parse_args()

    def print_options(self, opt):
        message = ''
        message += '----------------- Options ---------------\n'
        for k, v in sorted(vars(opt).items()):
            comment = ''
            default = self.parser.get_default(k)
            if v != default:
                comment = '\t[default: %s]' % str(default)
            message += '{:>25}: {:<30}{}\n'.format(str(k), str(v), comment)
        message += '----------------- End -------------------'
        print(message)

    def parse(self):

        opt = self.gather_options()
        opt.isTrain = self.isTrain   # train or test

        # process opt.suffix
        if opt.suffix:
            suffix = ('_' + opt.suffix.format(**vars(opt))) if opt.suffix != '' else ''
            opt.name = opt.name + suffix

        self.print_options(opt)

        # set gpu ids
        str_ids = opt.gpu_ids.split(',')
        opt.gpu_ids = []
        for str_id in str_ids:
            id = int(str_id)
            if id >= 0:
                opt.gpu_ids.append(id)
        if len(opt.gpu_ids) > 0:
            torch.cuda.set_device(opt.gpu_ids[0])

        self.opt = opt
        return self.opt


class TestOptions(BaseOptions):
    def initialize(self, parser):
        parser = BaseOptions.initialize(self, parser)
        parser.add_argument('--results_dir', type=str, default='./results/', help='saves results here.')
        parser.add_argument('--which_epoch', type=str, default='latest', help='which epoch to load? set to latest to use latest cached model')

        parser.set_defaults(model='test')
        # To avoid cropping, the loadSize should be the same as fineSize
        parser.set_defaults(loadSize=parser.get_default('fineSize'))

        self.isTrain = False
        return parser


# --- test_FaceDict.py ---
if __name__ == '__main__':
    opt = TestOptions().parse()
    opt.nThreads = 1   # test code only supports nThreads = 1
    opt.batchSize = 1  # test code only supports batchSize = 1
    opt.serial_batches = True  # no shuffle
    opt.no_flip = True  # no flip
    opt.display_id = -1  # no visdom display
    opt.which_epoch = 'latest' #

    opt.gpu_ids = [0] # if use cpu, set opt.gpu_ids = []
    TestImgPath = './TestData/TestWhole' # test image path
    ResultsDir = './Results/TestWhole' #save path
    UpScaleWhole = 4  # the upsamle scale. It should be noted that our face results are fixed to 512.

    print('\n###################### Now Running the X {} task ##############################'.format(UpScaleWhole))
